// Whether this page may act on the chat, told before anyone clicks: the chat's access
// (its owner and sharing, an `access` event) against who the page is (the viewer its
// socket's resync ack names). The server's owner gate decides; this only says so first.

import type { AccessView, Viewer } from "./contracts";
import { isRecord } from "./dom";

export interface Role {
  /** The page may prompt, answer, stop and set the chat's options. */
  mayAct: boolean;
  /** The page is the chat's owner: it may share the chat or stop sharing it. */
  owns: boolean;
  /** The owner's name, for "only <owner> can answer". */
  owner: string | null;
}

/** A page nobody named (local mode, the kernel's own comm) acts as the kernel's user. */
export const ANYONE: Role = { mayAct: true, owns: false, owner: null };

export function isViewer(value: unknown): value is Viewer {
  return isRecord(value) && typeof value.id === "string" && typeof value.name === "string";
}

export function roleOf(access: AccessView | undefined, viewer: Viewer | null): Role {
  if (viewer === null || access === undefined || access.owner === null) return ANYONE;
  const owns = access.owner === viewer.id;
  return {
    mayAct: owns || access.share === "anyone",
    owns,
    owner: access.ownerName ?? access.owner,
  };
}
