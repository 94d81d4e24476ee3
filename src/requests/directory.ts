/**
 * What the domain needs to know about people that only Slack knows: who is
 * in a user group, whose email an address is, and which workspace the relay
 * is installed in (a Slack Connect guest from another one answers only
 * where listed by id). The Slack adapter implements it with caches
 * (src/slack/directory.ts); tests pass a plain object.
 */

/** Slack could not be asked, or did not answer in time; the caller fails closed. */
export class DirectoryUnavailableError extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Slack's directory could not be read: ${reason}`);
    this.name = "DirectoryUnavailableError";
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

export interface PeopleDirectory {
  /**
   * Slack user ids of a user group's members (usergroups.users.list), served
   * from a cache no older than 60 s. An unknown or disabled group has no
   * members. Throws DirectoryUnavailableError when Slack cannot be asked.
   */
  usergroupMembers(usergroupId: string): Promise<ReadonlySet<string>>;
  /**
   * The Slack user id of the person with this email (users.lookupByEmail);
   * undefined when Slack knows nobody by it. Throws DirectoryUnavailableError
   * when Slack cannot be asked.
   */
  userIdByEmail(email: string): Promise<string | undefined>;
  /**
   * Team id of the workspace the relay is installed in (auth.test), once
   * known; undefined while Slack has not said.
   */
  homeTeamId(): Promise<string | undefined>;
}

/**
 * No Slack to ask (a service built without one, e.g. in tests of the agent
 * API): the relay's workspace is unknown and no group can be checked, so
 * only listed users and `approvers: any` work; everything else fails closed.
 */
export const NO_DIRECTORY: PeopleDirectory = {
  usergroupMembers: () => Promise.reject(new DirectoryUnavailableError("no Slack directory is configured")),
  userIdByEmail: () => Promise.reject(new DirectoryUnavailableError("no Slack directory is configured")),
  homeTeamId: () => Promise.resolve(undefined),
};
