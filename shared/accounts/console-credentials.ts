// Owns an account's console credentials after activation: the password (changed or reset), the TOTP secret
// (pending until two-factor is enabled, replaced with the authenticator app, re-sealed after an APP_SECRET
// rotation, cleared by an operator's reset)
// and the recovery codes' hashes; each change that matters later is written to the audit log. Hashing, sealing
// and checking them is the console's (api/console/); this module only stores them. The first password is set
// with the account's activation (AccountService.activate). A credential write is read back before it is
// reported done (shared/db/verified-update.ts): a lost password change would leave the old password working.
import type { Models } from '../db/models';
import type { Clock } from '../billing/month';
import { updateVerified } from '../db/verified-update';
import { AuditLog } from './audit-log';

export class ConsoleCredentials {
  private readonly auditLog: AuditLog;

  constructor(
    private readonly models: Models,
    private readonly clock: Clock,
  ) {
    this.auditLog = new AuditLog(models, clock);
  }

  /** A new console password (reset or change); the caller ends the account's other sessions. */
  async setPassword(customerId: string, passwordHash: string, how: 'reset' | 'changed'): Promise<void> {
    await updateVerified(this.models.Account, { _id: customerId }, { passwordHash, passwordChangedAt: this.clock() });
    await this.auditLog.record(customerId, `console.password_${how}`, null);
  }

  /** Replaces a TOTP secret sealed with an earlier APP_SECRET by the same secret sealed with the current one. */
  async resealTotpSecret(customerId: string, before: string, after: string): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId, totpSecretEnc: before }, { $set: { totpSecretEnc: after } });
  }

  /**
   * An operator's two-factor reset (a customer lost both the phone and the recovery codes, after checking who
   * they are): the secret and the codes are gone, and the next sign-in sets up two-factor again.
   */
  async resetTwoFactor(customerId: string): Promise<void> {
    await updateVerified(this.models.Account, { _id: customerId }, { totpEnabled: false, totpSecretEnc: null, recoveryCodeHashes: [] });
    await this.auditLog.record(customerId, 'two_factor.reset_by_operator', null);
  }

  /** Stores the pending TOTP secret (sealed by the caller) while two-factor is not yet on. */
  async setPendingTotpSecret(customerId: string, sealed: string): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId, totpEnabled: false }, { $set: { totpSecretEnc: sealed } });
  }

  /**
   * The customer replaced the authenticator app (a code from the new secret confirmed it): the new sealed secret
   * and a new set of recovery codes in one update, only while the secret is still `before` (false otherwise:
   * another replacement or an operator reset came first).
   */
  async replaceTotpSecret(customerId: string, before: string, after: string, recoveryCodeHashes: string[]): Promise<boolean> {
    const written = await updateVerified(
      this.models.Account,
      { _id: customerId, totpEnabled: true, totpSecretEnc: before },
      { totpSecretEnc: after, recoveryCodeHashes },
    );
    if (written === 'unmatched') return false;
    await this.auditLog.record(customerId, 'console.authenticator_replaced', null);
    return true;
  }

  async enableTotp(customerId: string, recoveryCodeHashes: string[]): Promise<void> {
    await updateVerified(this.models.Account, { _id: customerId }, { totpEnabled: true, recoveryCodeHashes });
    await this.auditLog.record(customerId, 'console.two_factor_enabled', null);
  }

  async replaceRecoveryCodes(customerId: string, recoveryCodeHashes: string[]): Promise<void> {
    await updateVerified(this.models.Account, { _id: customerId }, { recoveryCodeHashes });
    await this.auditLog.record(customerId, 'console.recovery_codes_regenerated', null);
  }

  /**
   * Takes spent recovery codes out of the account's list and audits the use of one. The list is not what makes
   * a code usable once: the caller's marker is (api/console/auth/recovery-codes.ts), because an engine that loses
   * concurrent updates (FerretDB 1.24) may put a pulled code back; every spent code is pulled again each time.
   */
  async pullSpentRecoveryCodes(customerId: string, spent: string[]): Promise<void> {
    await this.models.Account.updateOne({ _id: customerId }, { $pull: { recoveryCodeHashes: { $in: spent } } });
    await this.auditLog.record(customerId, 'console.recovery_code_used', null);
  }
}
