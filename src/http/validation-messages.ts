import type { FastifyError } from 'fastify';

type AjvIssue = NonNullable<FastifyError['validation']>[number];

function fieldOf(issue: AjvIssue): string {
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const missing = (issue.params as { missingProperty?: string }).missingProperty;
  if (issue.keyword === 'required' && missing) return path ? `${path}.${missing}` : missing;
  return path || (issue as { schemaPath?: string }).schemaPath?.split('/')[2] || 'body';
}

/** Laravel-style wording, which the clients of the real service show to their users. */
function messageOf(field: string, issue: AjvIssue): string {
  const p = issue.params as Record<string, unknown>;
  switch (issue.keyword) {
    case 'required':
      return `The ${field} field is required.`;
    case 'maxLength':
      return `The ${field} field must not be greater than ${p.limit} characters.`;
    case 'minLength':
      return Number(p.limit) <= 1 ? `The ${field} field is required.` : `The ${field} field must be at least ${p.limit} characters.`;
    case 'type':
      return `The ${field} field must be ${p.type === 'integer' ? 'an integer' : p.type === 'array' ? 'an array' : `a ${p.type}`}.`;
    case 'enum':
    case 'const':
    case 'anyOf':
    case 'oneOf':
      return `The selected ${field} is invalid.`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `The ${field} field must be at least ${p.limit}.`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `The ${field} field must not be greater than ${p.limit}.`;
    case 'format':
      return `The ${field} field must be a valid ${p.format}.`;
    case 'pattern':
      return `The ${field} field format is invalid.`;
    case 'maxItems':
      return `The ${field} field must not have more than ${p.limit} items.`;
    case 'additionalProperties':
      return `The ${field} field has an unknown key "${p.additionalProperty}".`;
    default:
      return `The ${field} field is invalid.`;
  }
}

export function validationErrors(error: FastifyError): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of error.validation ?? []) {
    const field = fieldOf(issue);
    const list = (errors[field] ??= []);
    const message = messageOf(field, issue);
    if (!list.includes(message)) list.push(message);
  }
  return errors;
}
