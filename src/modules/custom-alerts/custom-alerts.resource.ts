import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import type { CustomAlertResource } from './custom-alerts.schemas.js';
import type { CustomAlertRow } from './custom-alerts.table.js';

export function toCustomAlertResource(row: CustomAlertRow): CustomAlertResource {
  return {
    id: row.id,
    external_id: row.external_id,
    header: row.header,
    message: row.message,
    image_url: row.image_url,
    sound_url: row.sound_url,
    is_shown: row.is_shown,
    created_at: formatDateTime(row.created_at),
    shown_at: formatNullableDateTime(row.shown_at),
  };
}
