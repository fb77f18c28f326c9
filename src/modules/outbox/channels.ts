/** Real-time channel names (spec 6.2). `$` marks a private channel that needs a channel token. */
export const donationChannel = (userId: number) => `$alerts:donation_${userId}`;
export const goalChannel = (userId: number) => `$goals:goal_${userId}`;
export const pollChannel = (userId: number) => `$polls:poll_${userId}`;
export const widgetChannel = (userId: number) => `$widget:alerts_${userId}`;
