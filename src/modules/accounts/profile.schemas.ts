import { Type, type Static } from 'typebox';

/** Spec §2 "User profile" plus the compatibility.md §2 extras (`is_active`, `language`). */
export const ProfileResource = Type.Object({
  id: Type.Integer(),
  code: Type.String({ description: 'Unique user name; may change when the user renames.' }),
  name: Type.String(),
  avatar: Type.String({ description: 'URL of the picture.' }),
  email: Type.String(),
  is_active: Type.Integer({ minimum: 0, maximum: 1 }),
  language: Type.String({ description: 'Locale, e.g. `en_US`.' }),
  socket_connection_token: Type.String({ description: 'HS256 JWT (`sub` = user id, `exp`) for the real-time connection at `/connection/websocket`.' }),
});
export type ProfileResource = Static<typeof ProfileResource>;

export const ProfileResponse = Type.Object({ data: ProfileResource });
