// The attachments bucket (docs/api.md, "Attachments"): the only code that touches R2. Keys, reads, deletes, listings
// and the streaming upload.
export {
  attachmentKey,
  attachmentsBucketAnswers,
  deleteAttachmentObjects,
  listTenantAttachmentKeys,
  openAttachment,
  readAttachmentBytes,
} from "./bucket";
export { commitUpload, discardUpload, type StagedUpload, signatureMatches, stageUpload } from "./upload";
