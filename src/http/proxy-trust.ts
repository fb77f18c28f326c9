import proxyAddr from '@fastify/proxy-addr';
import type { Config } from '../config/config.js';

/** Whether the peer `address`, `hop` steps from us (0 = the socket's peer), may speak for the client. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY as a function, in the shape Fastify's `trustProxy` and proxy-addr take. A hop count
 * trusts that many peers nearest to us whatever their address (Fastify itself no longer takes a
 * number): safe only when the proxies are the one way in, which README's recipe sets up.
 */
export function proxyTrust(config: Pick<Config, 'trustProxy'>): ProxyTrust | false {
  const setting = config.trustProxy;
  if (setting === false) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyAddr.compile(setting);
}
