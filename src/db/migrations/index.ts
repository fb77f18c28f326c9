import type { Migration } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as oauth from './0002_oauth.js';
import * as merchandise from './0003_merchandise.js';
import * as customAlerts from './0004_custom_alerts.js';
import * as goalsPolls from './0005_goals_polls.js';
import * as widgets from './0006_widgets.js';
import * as oauthExtra from './0007_oauth_extra.js';
import * as outboxEvents from './0008_outbox_events.js';
import * as channelStreams from './0009_channel_streams.js';
import * as serverNodes from './0012_server_nodes.js';
import * as changeVersions from './0015_change_versions.js';
import * as alertMedia from './0016_alert_media.js';
import * as payments from './0017_payments.js';
import * as moderation from './0018_moderation.js';
import * as webhooks from './0019_webhooks.js';
import * as onboarding from './0020_onboarding.js';
import * as webhookLogPruning from './0023_webhook_log_pruning.js';
import * as webhookDeliveredAttempt from './0025_webhook_delivered_attempt.js';

/**
 * Every migration, in order. One set for SQLite and PostgreSQL; names sort lexically, so keep the
 * four-digit prefix. Add new ones at the end; never edit one that has shipped.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_oauth': oauth,
  '0003_merchandise': merchandise,
  '0004_custom_alerts': customAlerts,
  '0005_goals_polls': goalsPolls,
  '0006_widgets': widgets,
  '0007_oauth_extra': oauthExtra,
  '0008_outbox_events': outboxEvents,
  '0009_channel_streams': channelStreams,
  '0012_server_nodes': serverNodes,
  '0015_change_versions': changeVersions,
  '0016_alert_media': alertMedia,
  '0017_payments': payments,
  '0018_moderation': moderation,
  '0019_webhooks': webhooks,
  '0020_onboarding': onboarding,
  '0023_webhook_log_pruning': webhookLogPruning,
  '0025_webhook_delivered_attempt': webhookDeliveredAttempt,
};
