// Bench-only Worker entry (never deployed): the SDK's own router sends `/agents/peer-chat/<name>` to the peer.
import { routeAgentRequest } from "agents";
import type { PeerEnv } from "./peer-chat";

export { PeerChat } from "./peer-chat";

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/v1/health")
      return Response.json({ status: "ok", environment: "bench" });
    return (await routeAgentRequest(request, env)) ?? new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<PeerEnv>;
