/**
 * Slack's Block Kit limits in one place (characters unless said otherwise),
 * shared by the builders and by the checkers in limits.ts.
 */
export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  /** All text of a message together, fallback text included. */
  messageText: 11_000,
  fallbackText: 3000,
  sectionText: 3000,
  sectionFields: 10,
  fieldText: 2000,
  headerText: 150,
  contextElements: 10,
  contextText: 2000,
  actionsElements: 25,
  buttonText: 75,
  buttonValue: 2000,
  actionId: 255,
  blockId: 255,
  optionText: 75,
  optionValue: 150,
  optionDescription: 75,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  inputLabel: 2000,
  inputHint: 2000,
  placeholder: 150,
  initialValue: 3000,
  choiceOptions: 10,
  selectOptions: 100,
  viewTitle: 24,
  viewButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
} as const;

/** Encoded code characters per message section (the fence and a cut note still fit). */
export const CODE_PER_SECTION = 2800;
