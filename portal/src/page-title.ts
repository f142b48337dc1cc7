/** The portal's name, last in every document title. */
export const PORTAL_NAME = 'pts portal';

/** A page's document title: its name, the brand it shows (if any), the portal: `Program · Acme · pts portal`. */
export function pageTitle(page: string | undefined, brandName: string | undefined): string {
  return [page, brandName, PORTAL_NAME].filter(Boolean).join(' · ');
}
