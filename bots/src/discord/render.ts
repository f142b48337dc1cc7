import type { APIActionRowComponent, APIButtonComponentWithCustomId, APIEmbed } from 'discord.js';
import { ButtonStyle, ComponentType, MessageFlags } from 'discord.js';
import type { Reply, ButtonStyle as ReplyButtonStyle } from '../core/types.ts';

/** Discord's limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
const LIMITS = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  buttonsPerRow: 5,
  rows: 5,
  label: 80,
  customId: 100,
} as const;

/** The pts brand colour on embeds. */
export const EMBED_COLOUR = 0x5865f2;

const STYLES: Record<
  ReplyButtonStyle,
  ButtonStyle.Primary | ButtonStyle.Secondary | ButtonStyle.Success | ButtonStyle.Danger
> = {
  primary: ButtonStyle.Primary,
  secondary: ButtonStyle.Secondary,
  success: ButtonStyle.Success,
  danger: ButtonStyle.Danger,
};

/** A Reply as Discord message options: one embed, buttons in action rows (`custom_id` = the button's action). */
export interface RenderedReply {
  content?: string;
  embeds: APIEmbed[];
  components: APIActionRowComponent<APIButtonComponentWithCustomId>[];
  allowedMentions: { parse: []; users?: string[] };
}

/** An interaction response: a message that may be ephemeral. */
export interface RenderedInteractionReply extends RenderedReply {
  flags?: MessageFlags.Ephemeral;
}

export interface RenderOptions {
  /** A user to mention (and ping) in the message content, e.g. a newcomer being welcomed. */
  mentionUserId?: string;
}

/** A Reply as an interaction response: the message plus the ephemeral flag when the reply is personal. */
export function renderInteractionReply(reply: Reply): RenderedInteractionReply {
  const rendered: RenderedInteractionReply = renderReply(reply);
  if (reply.ephemeral) rendered.flags = MessageFlags.Ephemeral;
  return rendered;
}

/**
 * Renders a neutral Reply as a Discord message: text in an embed, fields, buttons. Channel messages cannot
 * be ephemeral; the adapter sends personal replies outside interactions by DM instead.
 */
export function renderReply(reply: Reply, options: RenderOptions = {}): RenderedReply {
  const embed: APIEmbed = { color: EMBED_COLOUR };
  if (reply.title) embed.title = truncate(reply.title, LIMITS.title);
  if (reply.text) embed.description = truncate(reply.text, LIMITS.description);
  if (reply.fields && reply.fields.length > 0) {
    embed.fields = reply.fields.slice(0, LIMITS.fields).map((field) => ({
      name: truncate(field.name || '\u200b', LIMITS.fieldName),
      value: truncate(field.value || '\u200b', LIMITS.fieldValue),
      inline: field.inline ?? false,
    }));
  }
  if (!embed.title && !embed.description && !embed.fields) embed.description = '\u200b';

  const buttons = (reply.buttons ?? []).slice(0, LIMITS.buttonsPerRow * LIMITS.rows).map(
    (button): APIButtonComponentWithCustomId => ({
      type: ComponentType.Button,
      style: STYLES[button.style ?? 'primary'],
      label: truncate(button.label, LIMITS.label),
      custom_id: button.action.slice(0, LIMITS.customId),
    }),
  );
  const components: RenderedReply['components'] = [];
  for (let start = 0; start < buttons.length; start += LIMITS.buttonsPerRow) {
    components.push({ type: ComponentType.ActionRow, components: buttons.slice(start, start + LIMITS.buttonsPerRow) });
  }

  const rendered: RenderedReply = { embeds: [embed], components, allowedMentions: { parse: [] } };
  if (options.mentionUserId) {
    rendered.content = `<@${options.mentionUserId}>`;
    rendered.allowedMentions = { parse: [], users: [options.mentionUserId] };
  }
  return rendered;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
