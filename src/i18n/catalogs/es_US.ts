import type { Catalog } from './index.js';
import es_ES from './es_ES.js';

/**
 * Latin American Spanish: the Spanish of Spain (es_ES) where both say the same, and these where
 * usage differs (“monto”, “transmisión”, “ingresa”). Donor page and widgets; the rest falls back to English.
 */
const es_US: Catalog = {
  ...es_ES,
  'donor.lead': "Tu nombre, el monto y tu mensaje aparecen en la transmisión.",
  'donor.amount': "Monto",
  'donor.error.amount_required': "Ingresa un monto.",
  'donor.error.amount_positive': "El monto debe ser mayor que 0.",
  'donor.error.amount_format': "El monto debe ser un número positivo, por ejemplo {example}.",
  'donor.error.amount_decimals': "El monto puede tener como máximo dos decimales.",
  'donor.error.amount_too_large': "El monto es demasiado alto.",
  'donor.thanks.test_payment': "No se cobró dinero: este servidor registra las donaciones con un proveedor de pagos de prueba.",
  'widget.template.merchandise_sale': "{username} compra merch ({bought_amount} u.) — {money}",
};

export default es_US;
