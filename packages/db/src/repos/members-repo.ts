import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../client";
import { members, orgs, type OrgRole } from "../schema";

export type MemberRow = typeof members.$inferSelect;

/** The user's role in an org, or null when they are not a member. */
export async function getMembership(db: Db, userId: string, orgId: string): Promise<MemberRow | null> {
  const [row] = await db
    .select()
    .from(members)
    .where(and(eq(members.userId, userId), eq(members.organizationId, orgId)));
  return row ?? null;
}

/** Every org the user belongs to with their role, oldest membership first. */
export async function listMemberships(db: Db, userId: string): Promise<{ orgId: string; orgName: string; role: OrgRole }[]> {
  return db
    .select({ orgId: members.organizationId, orgName: orgs.name, role: members.role })
    .from(members)
    .innerJoin(orgs, eq(orgs.id, members.organizationId))
    .where(eq(members.userId, userId))
    .orderBy(asc(members.createdAt));
}
