/**
 * The tag a brand puts on its pages to load the browser SDK (docs/sdk.md, "Add it to a site"): the one place
 * it is written out, for the portal's copy button and the docs' example.
 */
export function sdkScriptUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/sdk.js`;
}

export function sdkSnippet(baseUrl: string, brandId: string): string {
  return `<script src="${sdkScriptUrl(baseUrl)}" data-brand-id="${brandId.toLowerCase()}" async></script>`;
}
