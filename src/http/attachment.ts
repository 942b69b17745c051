/**
 * The Content-Disposition of a download: an ASCII `filename` for old clients and the name itself as
 * RFC 6266's `filename*` (UTF-8, percent-encoded), so that a file or backup named in any language
 * is saved under its own name.
 */
export function attachment(name: string): string {
  const safe = name.replace(/[/\\]/g, '_') || 'download';
  const ascii = safe.replace(/[^\x20-\x7e]|["\\]/g, '_');
  // RFC 5987's attr-char leaves out ' ( ) * as well, which encodeURIComponent keeps
  const encoded = encodeURIComponent(safe).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
