import type { DomainError, ValidationError } from '../domain/errors.js';
import { renderMessage } from '../i18n/messages.js';
import type { Translator } from '../i18n/translator.js';

/**
 * What a service's error says, in the page's language: the same message code the API answers in
 * English, rendered from the page's catalog (a string the locale lacks is English).
 */
export function errorText(t: Translator, err: DomainError): string {
  return renderMessage(t, err.detail);
}

/** Each field's messages in the page's language, for the form's inline errors. */
export function fieldErrorTexts(t: Translator, err: ValidationError): Record<string, string[]> {
  return Object.fromEntries(Object.entries(err.fields).map(([field, list]) => [field, list.map((m) => renderMessage(t, m))]));
}
