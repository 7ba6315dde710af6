/**
 * Secrets the hub must keep to use them again (a peer hub's bridge token), stored sealed with a key
 * of this hub's own that stays out of the database and out of backups (the secrets adapter,
 * `src/adapters/secrets/`, keeps it in `DATA_DIR/secret.key`).
 *
 * `context` names the record a value belongs to (`fleet_link:link:<peerUrl>`): it is bound to the
 * sealed value, so a value sealed for one record does not open for another.
 */
export interface SecretBox {
  /** The value sealed: a versioned text (`v1:…`), different at every call. */
  seal(plain: string, context: string): string;
  /**
   * The value in clear; undefined when it cannot be opened: sealed with another key (a restore on
   * another box), for another record, or altered.
   */
  open(sealed: string, context: string): string | undefined;
  /** Whether a stored value is in the sealed format (any version), rather than a value kept in clear before sealing existed. */
  isSealed(value: string): boolean;
}

/** The key file's name under DATA_DIR. */
export const SECRET_KEY_FILE = 'secret.key';
