import type { Redis } from 'ioredis';

/**
 * Closes an ioredis client without hanging: QUIT waits for a connection that may never come (Redis
 * down, client retrying), so a client that is not ready is disconnected at once, and a ready one
 * gets a second to quit cleanly.
 */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  const timer = new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
  await Promise.race([client.quit().then(() => undefined, () => undefined), timer]);
  client.disconnect();
}
