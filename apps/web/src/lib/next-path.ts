/**
 * Where to go after signing in or up (`?next=`), e.g. back to an invitation link. Only a path on
 * this site is followed: anything else (`//evil.example`, `https://…`, `/\evil`) falls back to
 * home, so the parameter cannot be used to send people elsewhere after they sign in.
 */
export function safeNextPath(value: unknown): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (/[\u0000-\u001f]/.test(value)) return "/";
  return value;
}
