import { useBlockProps } from '@wordpress/block-editor';

/** What the editor shows for a widget: its name and what visitors will see (their data loads on the page). */
export function EditPreview({ title, description }: { title: string; description: string }) {
  return (
    <div {...useBlockProps({ className: 'pts-block' })}>
      <h3>{title}</h3>
      <p>{description}</p>
    </div>
  );
}
