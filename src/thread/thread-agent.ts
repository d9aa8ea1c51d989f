// The one generic thread Durable Object: lifecycle and dispatch only, hardened against client-driven SDK features.
import { Agent, type Connection, type ConnectionContext, type WSMessage } from "agents";
import { WS_CLOSE_CODE } from "../shared/errors";

export class ThreadAgent extends Agent<Env> {
  // Never tell a client the object's name or class.
  static override options = { sendIdentityOnConnect: false };

  // No SDK protocol frames (identity, state, MCP lists) reach clients.
  override shouldSendProtocolMessages(_connection: Connection, _ctx: ConnectionContext): boolean {
    return false;
  }

  // Clients may never write agent state.
  override shouldConnectionBeReadonly(_connection: Connection, _ctx: ConnectionContext): boolean {
    return true;
  }

  override validateStateChange(_next: unknown, source: Connection | "server"): void {
    if (source !== "server") throw new Error("Thread state is written by the server only.");
  }

  override onRequest(_request: Request): Response {
    return Response.json(
      { error: { code: "not_found", message: "Not found.", requestId: "" } },
      { status: 404 },
    );
  }

  override onConnect(connection: Connection, _ctx: ConnectionContext): void {
    connection.close(WS_CLOSE_CODE.not_found ?? 4404, "not_found");
  }

  override onMessage(_connection: Connection, _message: WSMessage): void {}
}
