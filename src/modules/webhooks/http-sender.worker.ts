import { parentPort } from 'node:worker_threads';
import { ReceiverAgents, sendChecked, type CheckedRequest } from './endpoint.js';

/**
 * The webhook dispatcher's HTTP side, on its own thread (http-sender-thread.ts): requests whose
 * address the main thread resolved and checked, sent over keep-alive connections pinned to that
 * address. Only the answer goes back.
 */
const agents = new ReceiverAgents();
parentPort!.on('message', async (message: { id: number; request: CheckedRequest }) => {
  const result = await sendChecked(message.request, agents);
  parentPort!.postMessage({ id: message.id, result });
});
