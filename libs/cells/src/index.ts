export type {
  BridgeCall,
  CellOutcome,
  CompletedOutcome,
  FailedOutcome,
  ParkedImage,
  PendingCall,
  TerminalCellOutcome,
  WaitingOutcome,
} from './outcome';
export * from './run-messages';
export * from './result';
export * from './source';
