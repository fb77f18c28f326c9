import type { Catalog } from './index.js';
import es_ES from './es_ES.js';

/**
 * Latin American Spanish: the Spanish of Spain (es_ES) where both say the same, and these where
 * usage differs (“monto”, “transmisión”, “ingresa”). Donor page and widgets; the rest falls back to English.
 */
const es_US: Catalog = {
  ...es_ES,
  'donor.lead': "Tu nombre, el monto y tu mensaje aparecen en la transmisión.",
  'donor.limit.min_message_amount': "Tu mensaje aparece en la transmisión con donaciones desde {amount}; con las menores no se muestra.",
  'donor.limit.no_messages': "{name} no muestra mensajes en la transmisión.",
  'donor.amount': "Monto",
  'donor.error.amount_required': "Ingresa un monto.",
  'donor.error.amount_positive': "El monto debe ser mayor que 0.",
  'donor.error.amount_format': "El monto debe ser un número positivo, por ejemplo {example}.",
  'donor.error.amount_decimals': "El monto puede tener como máximo dos decimales.",
  'donor.error.amount_too_large': "El monto es demasiado alto.",
  'donor.thanks.test_payment': "No se cobró dinero: este servidor registra las donaciones con un proveedor de pagos de prueba.",
  'widget.template.merchandise_sale': "{username} compra merch ({bought_amount} u.) — {money}",
  'donor.closed': "{name} no está aceptando donaciones aquí en este momento.",
  'donor.pay_with': "¿Cómo quieres pagar?",
  'donor.error.provider': "Elige cómo pagar.",
  'donor.error.provider_currency': "{provider} solo acepta pagos en {list}.",
  'donor.error.provider_unavailable': "No se pudo contactar a {provider}. No se cobró nada; intenta de nuevo en un minuto.",
  'donor.kofi': "O apoya a {name} en Ko-fi",
  'donor.handoff.heading': "Rumbo a {provider}",
  'donor.handoff.continue': "Continuar a {provider}",
  'donor.waiting.heading': "Esperando tu pago",
  'donor.waiting.lead': "Tu donación de {amount} a {name} aparecerá en cuanto se confirme el pago. Esta página se actualiza sola.",
  'donor.waiting.refresh': "Verificar de nuevo",
  'payment.stripe.description': "Pagas con tarjeta en la página de pago segura de Stripe; la alerta aparece cuando Stripe confirma el pago.",
  'payment.yoomoney.description': "Pagas en rublos con YooMoney (tarjeta o billetera YooMoney); la alerta aparece cuando YooMoney confirma la transferencia.",
};

export default es_US;
