import { PermissionFlagsBits, PermissionsBitField } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { isGuildAdmin, resolveMention } from './bot.ts';
import { EMBED_COLOUR, renderInteractionReply, renderReply } from './render.ts';

describe('renderReply', () => {
  it('puts text in an embed, buttons in rows of five with the action as custom_id', () => {
    const rendered = renderInteractionReply({
      title: 'Streak',
      text: 'Three days',
      fields: [{ name: 'Current', value: '3', inline: true }],
      buttons: Array.from({ length: 7 }, (_, i) => ({
        action: `milestone:${i + 1}`,
        label: `Claim ${i + 1}`,
        style: 'success' as const,
      })),
      ephemeral: true,
    });
    expect(rendered.embeds).toEqual([
      {
        color: EMBED_COLOUR,
        title: 'Streak',
        description: 'Three days',
        fields: [{ name: 'Current', value: '3', inline: true }],
      },
    ]);
    expect(rendered.components.map((row) => row.components.length)).toEqual([5, 2]);
    expect(rendered.components[1]?.components[1]).toEqual({
      type: 2,
      style: 3,
      label: 'Claim 7',
      custom_id: 'milestone:7',
    });
    expect(rendered.flags).toBe(64);
    expect(rendered.allowedMentions).toEqual({ parse: [] });
  });

  it('never marks channel messages ephemeral, clips to Discord limits, mentions only whom it names', () => {
    const rendered = renderReply({ text: 'y'.repeat(5000), ephemeral: true }, { mentionUserId: '123456789012345678' });
    expect('flags' in rendered).toBe(false);
    expect(rendered.embeds[0]?.description).toHaveLength(4096);
    expect(rendered.content).toBe('<@123456789012345678>');
    expect(rendered.allowedMentions).toEqual({ parse: [], users: ['123456789012345678'] });
    expect(renderReply({ text: '' }).embeds[0]?.description).toBe('\u200b');
    expect(renderInteractionReply({ text: 'public' }).flags).toBeUndefined();
  });

  it('resolves mentions and ids, nothing else', () => {
    expect(resolveMention('<@123456789012345678>')).toBe('123456789012345678');
    expect(resolveMention('<@!123456789012345678>')).toBe('123456789012345678');
    expect(resolveMention('123456789012345678')).toBe('123456789012345678');
    expect(resolveMention('@bob')).toBeUndefined();
  });
});

describe('isGuildAdmin', () => {
  it('is Manage Server or Administrator, nothing else', () => {
    expect(isGuildAdmin(new PermissionsBitField(PermissionFlagsBits.ManageGuild))).toBe(true);
    expect(isGuildAdmin(new PermissionsBitField(PermissionFlagsBits.Administrator))).toBe(true);
    expect(
      isGuildAdmin(new PermissionsBitField(PermissionFlagsBits.ManageChannels | PermissionFlagsBits.KickMembers)),
    ).toBe(false);
    expect(isGuildAdmin(null)).toBe(false);
  });
});
