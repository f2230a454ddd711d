/** target.url with `?room=<room>` added when the connection joins one (raw ws, SockJS, SSE, polling). */
export function withRoom(url: string, room: string | undefined): string {
  if (room === undefined) return url;
  const u = new URL(url);
  u.searchParams.set("room", room);
  return u.toString();
}
