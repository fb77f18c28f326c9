/** A backup, restore, export or import that cannot go ahead; the message says why and what to do. */
export class BackupError extends Error {
  constructor(
    message: string,
    /** Process exit code: 2 = not possible in this set-up (PostgreSQL backups), 1 = bad input or state. */
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}
