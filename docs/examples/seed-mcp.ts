// Runnable example of the seed system's MCP tools on pts (docs/agent-api/converse-mcp.md, "The seed's tools"):
// spawns the stdio server as an MCP host would and calls the tools with the seed's own arguments.
//   npm start &   # writes .pts-data/demo-brand.json
//   PTS_BRAND_ID=$(node -p "require('./.pts-data/demo-brand.json').brandId") \
//   PTS_BRAND_SECURITY_KEY=$(node -p "require('./.pts-data/demo-brand.json').securityKey") \
//   node --import tsx docs/examples/seed-mcp.ts
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const brandId = process.env.PTS_BRAND_ID;
const securityKey = process.env.PTS_BRAND_SECURITY_KEY;
if (!brandId || !securityKey) {
  console.error('Set PTS_BRAND_ID and PTS_BRAND_SECURITY_KEY (the demo brand: .pts-data/demo-brand.json)');
  process.exit(2);
}

const client = new Client({ name: 'seed-example', version: '1.0.0' });
await client.connect(
  new StdioClientTransport({
    command: 'npm',
    args: ['run', '-s', 'mcp'],
    env: {
      ...getDefaultEnvironment(),
      PATH: process.env.PATH ?? '',
      PTS_API_URL: process.env.PTS_API_URL ?? 'http://127.0.0.1:3000',
      PTS_BRAND_ID: brandId,
      PTS_BRAND_SECURITY_KEY: securityKey,
      LOG_LEVEL: 'warn',
    },
    stderr: 'inherit',
  }),
);

/** Calls one tool and prints its answer (an error answer is printed too: it says what to fix). */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  const answer = JSON.parse(content[0]?.text ?? 'null') as Record<string, unknown>;
  console.log(result.isError ? `${name} ✗` : `${name} ✓`, JSON.stringify(answer));
  return answer;
}

// A moderator rewards a Discord member for the demo brand's complete_survey rule (75 pts).
await call('admin_reward', {
  adminId: 'mod#0001',
  targetUserId: '42424242424242424',
  platform: 'discord',
  eventType: 'complete_survey',
  reason: 'Best survey answer',
});
// What an event would pay now (rule amount × streak multiplier).
await call('calculate_reward', {
  userIdentifier: 'discord_42424242424242424@pts.local',
  platform: 'discord',
  baseReward: 75,
  eventType: 'complete_survey',
});
// A drop: 10 pts for the first 3 members who claim within the hour; the second claim of one member is refused.
const drop = await call('create_drop', {
  platform: 'discord',
  serverId: '123456789012345678',
  eventType: 'launch_party',
  reward: 10,
  maxClaims: 3,
  expiresInSeconds: 3600,
  triggerType: 'reaction',
  triggerEmoji: '🎉',
});
await call('claim_drop', { dropId: drop.dropId, platformUserId: '42424242424242424', platform: 'discord' });
await call('claim_drop', { dropId: drop.dropId, platformUserId: '42424242424242424', platform: 'discord' });
// Activity, client-reported stats and achievement progress.
await call('log_activity', {
  userIdentifier: 'discord_42424242424242424@pts.local',
  platform: 'discord',
  activityType: 'message',
  count: 1,
  activityId: 'msg-1',
});
await call('update_leaderboard_stats', {
  userIdentifier: 'discord_42424242424242424@pts.local',
  platform: 'discord',
  ltzAmount: 75,
  displayName: 'Ada',
});
await call('update_achievement_progress', {
  userIdentifier: 'discord_42424242424242424@pts.local',
  platform: 'discord',
  achievementType: 'message_count',
  newValue: 5,
  increment: true,
});
// Another bot's event: needs a rule mee6_level_up or level_up (the demo brand has neither: 400 names both).
await call('process_third_party_event', {
  platform: 'discord',
  sourceBot: 'mee6',
  eventType: 'level_up',
  targetUserId: '42424242424242424',
  level: 5,
});
// The member's pts (75 + 10; pending until minted) and stats.
await call('get_user_balance', { userEmail: 'discord_42424242424242424@pts.local', includeHistory: true });
await call('get_user_stats', { userIdentifier: 'discord_42424242424242424@pts.local', platform: 'discord' });
await client.close();
