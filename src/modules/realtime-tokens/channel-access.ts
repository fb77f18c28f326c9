import { donationChannel, goalChannel, pollChannel } from '../outbox/channels.js';

/** Which scope a private channel needs and whose it is (spec 6.2). Null for channels apps may not have. */
export function channelAccess(channel: string): { userId: number; scope: string } | null {
  const match = /^\$(alerts:donation|goals:goal|polls:poll)_([1-9]\d{0,15})$/.exec(channel);
  if (!match) return null;
  const userId = Number(match[2]);
  const scope = { 'alerts:donation': 'oauth-donation-subscribe', 'goals:goal': 'oauth-goal-subscribe', 'polls:poll': 'oauth-poll-subscribe' }[match[1]!]!;
  return { userId, scope };
}

/** The spec 6.2 channels of one streamer, for the docs and the dashboard. */
export function userChannels(userId: number): string[] {
  return [donationChannel(userId), goalChannel(userId), pollChannel(userId)];
}
