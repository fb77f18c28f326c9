import { Type } from 'typebox';
import { Paginated } from '../../http/pagination.js';

const dateTime = (description: string) => Type.String({ description: `${description} \`YYYY-MM-DD HH:MM:SS\`, UTC.` });

/** Spec §2 "Donation alert" plus the compatibility.md §2 extras; mirrors `DonationResource`. */
export const DonationResourceSchema = Type.Object({
  id: Type.Integer(),
  name: Type.Literal('donation'),
  username: Type.String({ description: 'Donor name.' }),
  recipient_name: Type.String({ description: 'The streamer’s name.' }),
  message_type: Type.Union([Type.Literal('text'), Type.Literal('audio')]),
  message: Type.String(),
  payin_system: Type.Union([Type.Object({ title: Type.String() }), Type.Null()]),
  amount: Type.Number(),
  currency: Type.String(),
  amount_in_user_currency: Type.Number({ description: 'Converted to the streamer’s main currency.' }),
  is_shown: Type.Integer({ minimum: 0, maximum: 1 }),
  created_at: dateTime('Donation time.'),
  shown_at: Type.Union([dateTime('Display time.'), Type.Null()]),
});

export const DonationPage = Paginated(DonationResourceSchema);
