// The attachment module's texts in English (docs/widget.md#attachments): kept out of the first screen's string table,
// layered like it (translations in ./locales/*.json, then the agent's, then the host's `data-strings`).

export const ATTACH_STRINGS = {
  attach: "Attach files",
  attachments: "Files to send",
  attached: "Attached",
  removeFile: "Remove {name}",
  uploading: "Uploading {name}",
  uploaded: "{name} is ready to send",
  uploadsPending: "Wait until the files are uploaded, or remove the ones that failed.",
  fileTooLarge: "{name} is too large: files can be up to {max}.",
  fileType: "{name} cannot be sent: this type of file is not accepted.",
  fileLimit: "No more files can be attached here.",
  storageFull: "There is no room for more files right now. Try again later.",
  uploadBusy: "Too many uploads at once. Try again shortly.",
  uploadFailed: "{name} could not be uploaded.",
  download: "Download {name}",
  /** The first screen's own "Try again" (and its translations), for a failed upload. */
  retry: "Try again",
};

export type AttachStrings = typeof ATTACH_STRINGS;
