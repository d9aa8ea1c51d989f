// Thread objects never connect to MCP servers: wrangler.toml aliases the SDK's `@modelcontextprotocol/client`
// imports (used only by `Agent.addMcpServer` and the connections it restores) to this module, keeping the MCP client,
// its transports and its JSON Schema validator out of the Worker. The SDK builds one validator when it loads and
// checks errors with `instanceof`, so these are classes; any attempt to connect throws.
const refused = () => new Error("Thread objects do not connect to MCP servers.");

export class Client {
  constructor() {
    throw refused();
  }
}

export class SSEClientTransport {
  constructor() {
    throw refused();
  }
}

export class StreamableHTTPClientTransport {
  constructor() {
    throw refused();
  }
}

export class SdkHttpError extends Error {
  readonly status: number | undefined = undefined;
}

export class CfWorkerJsonSchemaValidator {
  getValidator(): never {
    throw refused();
  }
}

/** The SDK's OAuth provider for MCP servers checks client metadata URLs with it; never reached here. */
export function validateClientMetadataUrl(): never {
  throw refused();
}
