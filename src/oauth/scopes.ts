/** Spec 5.2. */
export const SCOPES = {
  'oauth-user-show': 'See your profile: name, e-mail and avatar',
  'oauth-donation-subscribe': 'Receive your new donation alerts in real time',
  'oauth-donation-index': 'View your donations',
  'oauth-custom_alert-store': 'Show custom alerts on your stream',
  'oauth-goal-subscribe': 'Receive your donation goal updates in real time',
  'oauth-poll-subscribe': 'Receive your poll updates in real time',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/**
 * compatibility.md §4: scopes arrive space-, `+`- or `%20`-delimited (already decoded to spaces or `+` by the
 * time we see them), as repeated keys, or as an array (`scope[0]=…`).
 */
export function parseScopeParam(value: unknown): string[] {
  const parts: string[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
    else if (typeof v === 'string') parts.push(...v.split(/[\s+,]+/));
  };
  visit(value);
  return [...new Set(parts.filter(Boolean))];
}
