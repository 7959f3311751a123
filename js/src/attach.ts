// Attachments from the browser: a pasted or dropped image as a bounded ACP image block,
// and how the transcript shows attachments (thumbnails and chips).
//
// The caps come from acp_notebook/wire/contracts.py (via contracts.ts); the hub checks them again.

import {
  type Attachment,
  type AttachmentSummary,
  type ImageBlock,
  MAX_LABEL,
  MAX_THUMBNAIL,
  THUMBNAIL_PATTERN,
} from "./contracts";
import { clip, el } from "./dom";

/** Raw bytes of one image (its base64 must fit contracts.MAX_IMAGE_DATA, 1,400,000). */
export const MAX_IMAGE_BYTES = 1_050_000;
/** A larger file is refused before it is decoded at all. */
export const MAX_IMAGE_INPUT = 32 * 1024 * 1024;
export const MAX_IMAGE_SIDE = 1568;
const THUMBNAIL_SIDE = 96;

export const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
type ImageType = ImageBlock["mimeType"];
const THUMBNAIL = new RegExp(THUMBNAIL_PATTERN);

export class AttachError extends Error {}

async function base64(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function kb(size: number): string {
  return size < 1024 ? `${size} B` : `${Math.ceil(size / 1024).toLocaleString("en")} KB`;
}

async function encode(canvas: HTMLCanvasElement, type: string, quality?: number): Promise<Blob> {
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, type, quality));
  if (blob === null) throw new AttachError("the image could not be encoded");
  return blob;
}

function draw(image: ImageBitmap, side: number): HTMLCanvasElement {
  const scale = Math.min(1, side / Math.max(image.width, image.height));
  const canvas = el("canvas");
  canvas.width = Math.max(1, Math.round(image.width * scale));
  canvas.height = Math.max(1, Math.round(image.height * scale));
  const context = canvas.getContext("2d");
  if (context === null) throw new AttachError("no canvas to draw the image");
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return canvas;
}

/**
 * A pasted or dropped image file as an attachment: sent as is when it fits the caps,
 * else scaled to MAX_IMAGE_SIDE and re-encoded (PNG, or JPEG when the PNG is too big).
 */
export async function imageAttachment(file: Blob, name: string): Promise<Attachment> {
  if (!IMAGE_TYPES.has(file.type)) {
    throw new AttachError(`cannot attach ${file.type || "this file"}: only PNG, JPEG, GIF, WebP`);
  }
  if (file.size > MAX_IMAGE_INPUT) {
    throw new AttachError(`the image is ${kb(file.size)}; the cap is ${kb(MAX_IMAGE_INPUT)}`);
  }
  let image: ImageBitmap;
  try {
    image = await createImageBitmap(file);
  } catch {
    throw new AttachError("the image could not be read");
  }
  try {
    let data: Blob = file;
    let type = file.type as ImageType;
    const large = Math.max(image.width, image.height) > MAX_IMAGE_SIDE;
    if (large || file.size > MAX_IMAGE_BYTES) {
      const canvas = draw(image, MAX_IMAGE_SIDE);
      data = await encode(canvas, "image/png");
      type = "image/png";
      if (data.size > MAX_IMAGE_BYTES) {
        data = await encode(canvas, "image/jpeg", 0.85);
        type = "image/jpeg";
      }
      if (data.size > MAX_IMAGE_BYTES) {
        throw new AttachError(`the image does not fit in ${kb(MAX_IMAGE_BYTES)}`);
      }
    }
    const side = Math.min(1, MAX_IMAGE_SIDE / Math.max(image.width, image.height));
    const size = `${Math.round(image.width * side)}×${Math.round(image.height * side)}`;
    const small = await encode(draw(image, THUMBNAIL_SIDE), "image/jpeg", 0.7);
    const thumbnail = `data:${small.type};base64,${await base64(small)}`;
    const attachment: Attachment = {
      label: clip(`${name} · ${type.slice(6).toUpperCase()} ${size}`, MAX_LABEL),
      block: { type: "image", mimeType: type, data: await base64(data) },
    };
    if (thumbnail.length <= MAX_THUMBNAIL) attachment.thumbnail = thumbnail;
    return attachment;
  } finally {
    image.close();
  }
}

/** What the transcript shows of an attachment the composer holds (its summary). */
export function summarize(attachment: Attachment): AttachmentSummary {
  const { block } = attachment;
  const summary: AttachmentSummary = { type: block.type, label: attachment.label };
  const mime =
    block.type === "resource"
      ? block.resource.mimeType
      : "mimeType" in block
        ? block.mimeType
        : null;
  if (mime) summary.mimeType = mime;
  if (attachment.thumbnail) summary.thumbnail = attachment.thumbnail;
  return summary;
}

const ICONS: Record<string, string> = {
  image: "🖼",
  resource: "📎",
  resource_link: "🔗",
  text: "📝",
};

/**
 * Chips for attachments: a thumbnail for an image that has one (only a PNG/JPEG data
 * URL is ever put in `src`), else an icon and the label.
 */
export function attachmentChips(
  summaries: readonly AttachmentSummary[],
  remove?: (index: number, label: string) => HTMLElement,
): HTMLElement {
  const row = el("div", "acpnb-attachments");
  summaries.forEach((summary, index) => {
    const label = clip(String(summary.label ?? ""), MAX_LABEL);
    const chip = el("span", `acpnb-attachment acpnb-attachment-${summary.type}`);
    chip.title = label;
    const thumbnail = typeof summary.thumbnail === "string" ? summary.thumbnail : "";
    if (summary.type === "image" && THUMBNAIL.test(thumbnail)) {
      const img = el("img", "acpnb-thumbnail");
      img.src = thumbnail;
      img.alt = label;
      chip.append(img);
    } else {
      chip.append(el("span", "acpnb-attachment-icon", ICONS[summary.type] ?? "📎"));
    }
    chip.append(el("span", "acpnb-attachment-label", label));
    if (remove) chip.append(remove(index, label));
    row.append(chip);
  });
  return row;
}

/**
 * A resource as people name it: the last segment of its URI's path, decoded (a variable's
 * name for `notebook://variables/df`, a file's for `file:///w/notes.md`), else the URI.
 * The twin of `resource_name` in acp_notebook/wire/attachment_blocks.py (the folds use it).
 */
export function resourceName(uri: string): string {
  const path = (uri.split("#", 1)[0] ?? "").split("?", 1)[0]?.replace(/\/+$/, "") ?? "";
  let name: string;
  try {
    name = decodeURIComponent(path.slice(path.lastIndexOf("/") + 1));
  } catch {
    return uri;
  }
  return name || uri;
}
