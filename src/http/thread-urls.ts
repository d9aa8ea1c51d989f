// Where a launched thread is reached: its socket and its HTTP routes, on the host the launch was asked on.
export function threadUrls(
  requestUrl: string,
  threadId: string,
): { websocketUrl: string; threadUrl: string } {
  const socket = new URL(`/v1/threads/${threadId}/ws`, requestUrl);
  socket.protocol = socket.protocol === "https:" ? "wss:" : "ws:";
  return {
    websocketUrl: socket.toString(),
    threadUrl: new URL(`/v1/threads/${threadId}`, requestUrl).toString(),
  };
}
