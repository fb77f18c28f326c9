import { Type, type Static } from 'typebox';
import { GOAL_LIMITS } from '../../domain/goal.js';
import { POLL_LIMITS, POLL_TYPES } from '../../domain/poll.js';

/**
 * Request schemas of the dashboard's internal JSON API. They check shapes; the services check the
 * rules (and give the same messages to the CLI). Unknown keys are ignored. Amounts are numbers or
 * decimal strings ("12.50"), in major units.
 */
const Amount = Type.Union([Type.Number(), Type.String()], { description: 'Major units, e.g. 100 or "99.50".' });
const DateTimeOrNull = Type.Union([Type.String(), Type.Null()], {
  description: '`YYYY-MM-DD HH:MM:SS` (UTC) or ISO 8601 with an offset; null or "" for no end.',
});
const Flag = Type.Union([Type.Integer({ minimum: 0, maximum: 1 }), Type.Boolean()]);

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export type IdParams = Static<typeof IdParams>;

export const ListQuery = Type.Object({
  state: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('finished'), Type.Literal('all')], { default: 'all' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  /** Only items with a smaller id: pass the last id of a page to get the next one. */
  before: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ListQuery = Static<typeof ListQuery>;

export const GoalCreateBody = Type.Object({
  title: Type.String({ maxLength: GOAL_LIMITS.title }),
  goal_amount: Amount,
  start_amount: Type.Optional(Amount),
  currency: Type.Optional(Type.String()),
  expires_at: Type.Optional(DateTimeOrNull),
});
export type GoalCreateBody = Static<typeof GoalCreateBody>;

export const GoalUpdateBody = Type.Object({
  title: Type.Optional(Type.String({ maxLength: GOAL_LIMITS.title })),
  goal_amount: Type.Optional(Amount),
  start_amount: Type.Optional(Amount),
  expires_at: Type.Optional(DateTimeOrNull),
});
export type GoalUpdateBody = Static<typeof GoalUpdateBody>;

const OptionTitle = Type.String({ maxLength: POLL_LIMITS.optionTitle });
const PollType = Type.Union(POLL_TYPES.map((t) => Type.Literal(t)));

export const PollCreateBody = Type.Object({
  title: Type.String({ maxLength: POLL_LIMITS.title }),
  type: Type.Optional(PollType),
  options: Type.Array(OptionTitle, { minItems: POLL_LIMITS.minOptions, maxItems: POLL_LIMITS.maxOptions }),
  allow_user_options: Type.Optional(Flag),
  currency: Type.Optional(Type.String()),
});
export type PollCreateBody = Static<typeof PollCreateBody>;

export const PollUpdateBody = Type.Object({
  title: Type.Optional(Type.String({ maxLength: POLL_LIMITS.title })),
  type: Type.Optional(PollType),
  allow_user_options: Type.Optional(Flag),
  add_options: Type.Optional(Type.Array(OptionTitle, { maxItems: POLL_LIMITS.maxOptions })),
});
export type PollUpdateBody = Static<typeof PollUpdateBody>;
