import type { FastifyError } from 'fastify';
import { englishText, msg, type Message } from '../i18n/messages.js';

type AjvIssue = NonNullable<FastifyError['validation']>[number];

function fieldOf(issue: AjvIssue): string {
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing = (issue.params as { missingProperty?: string }).missingProperty;
  if (issue.keyword === 'required' && missing) return path ? `${path}.${missing}` : missing;
  return path || (issue as { schemaPath?: string }).schemaPath?.split('/')[2] || 'body';
}

/** Laravel-style wording (the English of each code), which the clients of the real service show to their users. */
function messageOf(field: string, issue: AjvIssue): Message {
  const p = issue.params as Record<string, unknown>;
  const limit = Number(p.limit);
  switch (issue.keyword) {
    case 'required':
      return msg('err.field.required', { field });
    case 'maxLength':
      return msg('err.field.max_chars', { field, max: limit });
    case 'minLength':
      return limit <= 1 ? msg('err.field.required', { field }) : msg('err.field.min_chars', { field, min: limit });
    case 'type':
      return msg('err.field.type', { field, type: String(p.type) });
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
      return msg('err.field.selected_invalid', { field });
    case 'minimum':
    case 'exclusiveMinimum':
      return msg('err.field.min_value', { field, min: String(p.limit) });
    case 'maximum':
    case 'exclusiveMaximum':
      return msg('err.field.max_value', { field, max: String(p.limit) });
    case 'format':
      return msg('err.field.format_named', { field, format: String(p.format) });
    case 'pattern':
      return msg('err.field.format', { field });
    case 'maxItems':
      return msg('err.field.max_items', { field, max: limit });
    case 'additionalProperties':
      return msg('err.field.unknown_key', { field, key: String(p.additionalProperty) });
    default:
      return msg('err.field.invalid', { field });
  }
}

/** Each field's messages, as codes (pages render them in their language). */
export function validationMessages(error: FastifyError): Record<string, Message[]> {
  const fields: Record<string, Message[]> = {};
  for (const issue of error.validation ?? []) {
    const field = fieldOf(issue);
    const list = (fields[field] ??= []);
    const message = messageOf(field, issue);
    if (!list.some((m) => englishText(m) === englishText(message))) list.push(message);
  }
  return fields;
}
