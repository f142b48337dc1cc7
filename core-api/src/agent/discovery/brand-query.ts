import { ADDRESS_PATTERN } from '@pts/shared';

const NAME_MAX = 200;

/** What a `check_brand` query names: a Brand ID, a host (from a URL or a bare domain), and the text as a name. */
export function normalizeBrandQuery(raw: string): { brandId: string | null; domain: string | null; name: string } {
  const text = raw.trim();
  const brandId = ADDRESS_PATTERN.test(text) ? text.toLowerCase() : null;
  let domain: string | null = null;
  if (!brandId && !/\s/.test(text) && text.includes('.')) {
    const asUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
    try {
      const host = new URL(asUrl).hostname.toLowerCase().replace(/\.$/, '');
      if (host.includes('.') && !host.startsWith('[')) domain = host;
    } catch {
      domain = null;
    }
  }
  return { brandId, domain, name: text.slice(0, NAME_MAX) };
}
