// Runnable example of the typed core-api client (docs/client.md):
//   PTS_BRAND_ID=0x… PTS_SECURITY_KEY=pts_sk_… node --import tsx docs/examples/core-client.ts
import { CoreApiError, createCoreClient, platformUserEmail } from '@pts/shared';

const brandId = process.env.PTS_BRAND_ID;
const securityKey = process.env.PTS_SECURITY_KEY;
if (!brandId || !securityKey) {
  console.error('Set PTS_BRAND_ID and PTS_SECURITY_KEY (printed by `npm run pts -- brand create`)');
  process.exit(2);
}

const core = createCoreClient({ baseUrl: process.env.PTS_URL ?? 'http://127.0.0.1:3000', brandId, securityKey });

// What the chat bot does on `/setup <brand_id> <security_key>` in a Discord server.
const setup = await core.chatGroupSetup({
  platform: 'discord',
  chatGroupId: '123456789012345678',
  groupName: 'Example fans',
  setupBy: 'admin#0001',
});
console.log('group', setup.chatGroup.chatGroupId, 'created', setup.created, 'rules created', setup.rulesCreated);

// Change a setting: only the given keys change.
const group = await core.chatGroupUpdate('discord:123456789012345678', {
  configMetadata: { naturalParticipation: { gmResponseEnabled: true } },
});
console.log('good-morning reward', group.configMetadata.naturalParticipation.gmReward);

// A user's `/daily`: the synthetic email is the user's identity on every platform.
const user = platformUserEmail('discord', '42424242424242424', 'pts.local');
const checkin = await core.checkin(user, 'discord');
console.log('check-in reward', checkin.reward, 'already claimed', checkin.alreadyClaimed);
const streak = await core.streakStatus(user);
console.log('streak', streak.currentStreak, 'multiplier', streak.multiplier);

const board = await core.leaderboard({ metric: 'pts_earned', period: 'week', limit: 5 });
console.log('leaderboard', board.leaderboard);

// Errors are CoreApiError with the server's status, code and details.
try {
  await core.claimMilestone(user, 7);
} catch (error) {
  if (!(error instanceof CoreApiError)) throw error;
  console.log('milestone refused:', error.status, error.code, error.message);
}
