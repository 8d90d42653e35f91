// Images pasted or dropped into the prompt, sent with the next message as ImageBlocks.
// The API takes PNG, JPEG, GIF and WebP up to 5 MB; anything else is refused at once, with
// a message, rather than failing the whole message later.

import type { ImageBlock } from '../core/protocol.generated';
import { h, iconButton, setHidden } from './dom';

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const TYPES: ImageBlock['mediaType'][] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

function isImageType(type: string): type is ImageBlock['mediaType'] {
  return (TYPES as string[]).includes(type);
}

function readBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      // readAsDataURL gives a string (an ArrayBuffer is readAsArrayBuffer's).
      if (typeof reader.result === 'string') resolve(reader.result.replace(/^data:[^,]*,/, ''));
      else reject(new Error('cannot read the image'));
    };
    reader.onerror = () => reject(reader.error ?? new Error('cannot read the image'));
    reader.readAsDataURL(file);
  });
}

export class ImageTray {
  readonly el = h('div', { class: 'image-tray' });
  private images: { block: ImageBlock; name: string }[] = [];

  constructor(private readonly refuse: (message: string) => void) {
    this.el.hidden = true;
  }

  get blocks(): ImageBlock[] {
    return this.images.map((i) => i.block);
  }

  /** Adds the image files among `files`; says why the others are refused. */
  async add(files: File[]): Promise<void> {
    for (const file of files) {
      if (!isImageType(file.type)) {
        this.refuse(`${file.name || 'This file'} is not an image Claude can read (PNG, JPEG, GIF or WebP).`);
        continue;
      }
      if (file.size > MAX_IMAGE_BYTES) {
        this.refuse(
          `${file.name || 'The image'} is ${(file.size / 1024 / 1024).toFixed(1)} MB: images can be 5 MB at most.`,
        );
        continue;
      }
      this.images.push({
        block: { type: 'image', mediaType: file.type, data: await readBase64(file) },
        name: file.name || 'pasted image',
      });
    }
    this.render();
  }

  clear(): void {
    this.images = [];
    this.render();
  }

  private render(): void {
    setHidden(this.el, !this.images.length);
    this.el.replaceChildren(
      ...this.images.map((image, i) => {
        const img = h('img', {
          class: 'thumbnail',
          attrs: { alt: image.name, src: `data:${image.block.mediaType};base64,${image.block.data}` },
        });
        return h(
          'div',
          { class: 'thumb', title: image.name },
          img,
          iconButton(
            '×',
            `Remove ${image.name}`,
            () => {
              this.images.splice(i, 1);
              this.render();
            },
            'remove-image',
          ),
        );
      }),
    );
  }
}
