// Thread sockets speak this product's own frames (docs/protocol.md): the SDK's Cap'n Web transport, chosen by a
// `?__agents_transport=capnweb` upgrade, is never offered — the Worker forwards a socket to its thread with a URL of
// its own, so the query cannot reach the object. wrangler.toml aliases `capnweb` to this module, keeping the RPC
// library out of the Worker; a session that were somehow requested is refused.
const refused = () => new Error("Thread sockets do not offer the Cap'n Web transport.");

export function newWebSocketRpcSession(): never {
  throw refused();
}

export class RpcTarget {}
