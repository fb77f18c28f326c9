import type { AccountTables } from '../modules/accounts/accounts.table.js';
import type { AppTables } from '../modules/apps/apps.table.js';
import type { BalanceTables } from '../modules/balances/balances.table.js';
import type { MerchandiseTables } from '../modules/merchandise/merchandise.table.js';
import type { ModerationTables } from '../modules/moderation/moderation.table.js';
import type { MerchantTables } from '../modules/merchants/merchants.table.js';
import type { SaleTables } from '../modules/sales/sales.table.js';
import type { CustomAlertTables } from '../modules/custom-alerts/custom-alerts.table.js';
import type { CurrencyTables } from '../modules/currencies/currencies.table.js';
import type { DonationTables } from '../modules/donations/donations.table.js';
import type { PaymentTables } from '../modules/payments/payments.table.js';
import type { OutboxTables } from '../modules/outbox/outbox.table.js';
import type { OAuthTables } from '../oauth/oauth.table.js';
import type { GoalTables } from '../modules/goals/goals.table.js';
import type { PollTables } from '../modules/polls/polls.table.js';
import type { WidgetTables } from '../modules/widgets/widgets.table.js';
import type { MediaTables } from '../modules/media/media.table.js';
import type { ServerNodeTables } from '../ops/server-nodes.table.js';
import type { WebhookTables } from '../modules/webhooks/webhooks.table.js';
import type { ChangeVersionTables } from './change-versions.table.js';
import type { OnboardingTables } from '../modules/onboarding/onboarding.table.js';

/** The whole database, composed from each feature's own table file. */
export interface DB extends AccountTables, AppTables, CurrencyTables, DonationTables, OutboxTables, OAuthTables, CustomAlertTables,
    MerchantTables, MerchandiseTables, SaleTables, BalanceTables, GoalTables, PollTables, WidgetTables, MediaTables, ServerNodeTables, ChangeVersionTables,
    OnboardingTables, ModerationTables, WebhookTables, PaymentTables {}
