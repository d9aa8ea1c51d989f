// The B2 baseline: a bare hibernating `Agent` that answers each message with 20 delta frames and a run end, so the
// thread's turn latency can be read as a ratio against the cheapest possible streamed reply in the same runtime.
import { Agent, type Connection, type ConnectionContext, type WSMessage } from "agents";

export const ECHO_DELTAS = 20;

// It reads no binding, so the SDK's default Env type is enough.
export class EchoAgent extends Agent {
  static override options = { sendIdentityOnConnect: false };

  override shouldSendProtocolMessages(_connection: Connection, _ctx: ConnectionContext): boolean {
    return false;
  }

  override onMessage(connection: Connection, message: WSMessage): void {
    if (typeof message !== "string") return;
    const runId = crypto.randomUUID();
    connection.send(JSON.stringify({ type: "run", runId, status: "running" }));
    for (let seq = 1; seq <= ECHO_DELTAS; seq += 1) {
      connection.send(JSON.stringify({ type: "delta", runId, seq, text: `echo ${seq} ` }));
    }
    connection.send(JSON.stringify({ type: "run", runId, status: "succeeded" }));
  }
}
