import { InlineKeyboard } from 'grammy';
import type { Reply } from '../core/types.ts';

/** Escapes text for Telegram's HTML parse mode. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A reply as Telegram message text (HTML) and an inline keyboard (one button a row; callback_data = action). */
export function renderReply(reply: Reply): { text: string; reply_markup?: InlineKeyboard } {
  const lines: string[] = [];
  if (reply.title) lines.push(`<b>${escapeHtml(reply.title)}</b>`);
  if (reply.text) lines.push(escapeHtml(reply.text));
  for (const field of reply.fields ?? []) lines.push(`<b>${escapeHtml(field.name)}</b>: ${escapeHtml(field.value)}`);
  const text = lines.join('\n').slice(0, 4096) || '…';
  if (!reply.buttons?.length) return { text };
  const keyboard = new InlineKeyboard();
  for (const button of reply.buttons) keyboard.text(button.label.slice(0, 64), button.action.slice(0, 64)).row();
  return { text, reply_markup: keyboard };
}
