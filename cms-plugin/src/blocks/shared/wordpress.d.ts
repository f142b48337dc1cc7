// @wordpress/block-editor is provided by WordPress at run time (the build maps it to wp.blockEditor); only the
// one function the blocks use is declared here instead of installing the package for its types.
declare module '@wordpress/block-editor' {
  export function useBlockProps(props?: Record<string, unknown>): Record<string, unknown>;
}
