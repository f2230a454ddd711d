/**
 * Group semantics shared by the reference servers' rooms: a message a member sends reaches every
 * OTHER member of its room, at once (no hold: the hold is the echo's ground truth, not the room's).
 */
export class RoomHub<M> {
  private readonly rooms = new Map<string, Set<M>>();

  join(room: string, member: M): void {
    let members = this.rooms.get(room);
    if (!members) this.rooms.set(room, (members = new Set()));
    members.add(member);
  }

  leave(room: string, member: M): void {
    const members = this.rooms.get(room);
    if (!members) return;
    members.delete(member);
    if (members.size === 0) this.rooms.delete(room);
  }

  /** Calls `deliver` for every member of `room` except `from`; returns how many it reached. */
  publish(room: string, from: M | undefined, deliver: (to: M) => void): number {
    const members = this.rooms.get(room);
    if (!members) return 0;
    let n = 0;
    for (const m of members) {
      if (m === from) continue;
      deliver(m);
      n++;
    }
    return n;
  }

  size(room: string): number {
    return this.rooms.get(room)?.size ?? 0;
  }

  clear(): void {
    this.rooms.clear();
  }
}

/** A `?room=` value: the room, undefined when absent, null when malformed (answer 400). */
export function parseRoom(raw: string | null | undefined): string | undefined | null {
  if (raw === null || raw === undefined) return undefined;
  return raw.length > 0 && raw.length <= 200 ? raw : null;
}
