// A tenant's program against a client generated from GET /v1/openapi.json (openapi-typescript + openapi-fetch):
// `npm run openapi:check` type-checks it against the generated types, then runs it against a live server.
import createClient from "openapi-fetch";
import type { paths } from "./api";

const baseUrl = process.env.BASE_URL;
const apiKey = process.env.API_KEY;
if (!baseUrl || !apiKey) throw new Error("BASE_URL and API_KEY are required");

const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

// `limit` is declared an integer with its bounds, so a generated client takes (and checks) a number.
const agents = await client.GET("/v1/agents", { params: { query: { limit: 2 } } });
if (agents.error || !agents.data) throw new Error(`GET /v1/agents answered ${agents.response.status}`);
const first: string | undefined = agents.data.items[0]?.id;

const sessions = await client.GET("/v1/sessions", { params: { query: { limit: 1 } } });
if (sessions.error || !sessions.data)
  throw new Error(`GET /v1/sessions answered ${sessions.response.status}`);
if (sessions.data.items.length > 1) throw new Error("limit=1 returned more than one session");

// A bound the contract states is a bound the server keeps: 0 is below it.
const refused = await client.GET("/v1/agents", { params: { query: { limit: 0 } } });
if (refused.response.status !== 400) throw new Error(`limit=0 answered ${refused.response.status}, not 400`);

// Never called: it only has to fail to compile, since text is not an integer.
function textLimit() {
  // @ts-expect-error the generated types refuse a string limit before any request is made
  return client.GET("/v1/agents", { params: { query: { limit: "20" } } });
}
void textLimit;

console.log(
  `typed client: ${agents.data.items.length} agent(s) (first ${first ?? "none"}), limit bounds kept`,
);
