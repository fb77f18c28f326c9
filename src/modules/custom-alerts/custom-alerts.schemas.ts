import { Type, type Static } from 'typebox';

/** Spec 4.3 / §8 limits. */
export const CUSTOM_ALERT_LIMITS = { external_id: 32, header: 255, message: 300, image_url: 255, sound_url: 255 } as const;

/**
 * First gate for `image_url` / `sound_url`: an http(s) URL with a host, no credentials, no
 * whitespace, control characters or backslashes (which WHATWG URL parsing would silently repair).
 * `httpUrlProblem` (custom-alerts.service.ts) then parses it and checks the host itself.
 */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://(?:\\[[0-9A-Fa-f:.]+\\]|[^\\s\\u0000-\\u001f\\u007f/?#@:\\\\\\[\\]]+)(?::[0-9]{1,5})?(?:[/?#][^\\s\\u0000-\\u001f\\u007f\\\\]*)?$';

const text = (max: number, description: string) => Type.Optional(Type.String({ maxLength: max, description }));
const url = (description: string) =>
  Type.Optional(Type.String({ maxLength: 255, pattern: HTTP_URL_PATTERN, description: `${description} An absolute http(s) URL, at most 255 characters.` }));

/**
 * POST /custom_alert body (spec 4.3). Every field is optional; an empty string or null means
 * "not given" (as the real service's Laravel stack treats them), so they are dropped before
 * validation. Unknown keys are ignored.
 */
export const CustomAlertBody = Type.Object({
  external_id: text(CUSTOM_ALERT_LIMITS.external_id, 'Your own id for the alert; unique per application and streamer, at most 32 characters.'),
  header: text(CUSTOM_ALERT_LIMITS.header, 'Header text, at most 255 characters.'),
  message: text(CUSTOM_ALERT_LIMITS.message, 'Message-box text, at most 300 characters.'),
  is_shown: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, default: 0, description: '1 records the alert as already displayed; default 0.' })),
  image_url: url('Image to show.'),
  sound_url: url('Sound to play.'),
});
export type CustomAlertBody = Static<typeof CustomAlertBody>;

const nullableString = Type.Union([Type.String(), Type.Null()]);

/** Spec §2 "Custom alert". */
export const CustomAlertResource = Type.Object({
  id: Type.Integer(),
  external_id: nullableString,
  header: nullableString,
  message: nullableString,
  image_url: nullableString,
  sound_url: nullableString,
  is_shown: Type.Integer({ minimum: 0, maximum: 1 }),
  created_at: Type.String({ description: '`YYYY-MM-DD HH:MM:SS`, UTC.' }),
  shown_at: Type.Union([Type.String(), Type.Null()], { description: 'Null until displayed.' }),
});
export type CustomAlertResource = Static<typeof CustomAlertResource>;
