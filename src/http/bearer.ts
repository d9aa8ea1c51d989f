// The one parser of `Authorization: Bearer <token>`: the scheme is case-insensitive; any other scheme or shape is null.

const BEARER = /^Bearer ([\x21-\x7e]+)$/i;

/** The token of an `Authorization: Bearer <token>` header no longer than `maxLength`, else `null`. */
export function bearerToken(authorization: string | undefined | null, maxLength: number): string | null {
  if (!authorization || authorization.length > maxLength) return null;
  const match = authorization.match(BEARER);
  return match === null ? null : match[1]!;
}
