/** The pure SLA-time domain: calendars, business time, policies, ticket statuses, SLA clocks. */

export {
  type AlertChannels,
  type AlertChannelsInput,
  type AlertChannelsPatch,
  alertChannelsPatchSchema,
  alertChannelsSchema,
  DEFAULT_GIVE_UP_AFTER_HOURS,
  DEFAULT_RETRY_DELAYS_SECONDS,
  maskWebhookUrl,
} from './alert-channels.js';
export { addBusinessMinutes, businessMinutesBetween, isBusinessTime } from './business-time.js';
export {
  type BusinessCalendar,
  type BusinessCalendarInput,
  type BusinessInterval,
  businessCalendarSchema,
  businessDaySchema,
  businessIntervalSchema,
  calendarFromRow,
  compileCalendar,
  fieldIssues,
  type Holiday,
  holidaySchema,
  isoDateSchema,
  isValidTimeZone,
  parseCalendar,
  timeZoneSchema,
  WEEKDAYS,
  type Weekday,
  weeklyHoursSchema,
} from './calendar.js';
export {
  CalendarInvalidError,
  type FieldIssue,
  NoBusinessTimeError,
  SlaPolicyConflictError,
  StegaDomainError,
  TicketTransitionError,
} from './errors.js';
export {
  DEFAULT_WARNING_SHARE,
  elapsedBusinessMinutes,
  elapsedShare,
  isBreached,
  isWarning,
  pauseSlaClock,
  restartSlaClock,
  resumeSlaClock,
  retargetSlaClock,
  type SlaClock,
  type SlaClockKind,
  type SlaClockState,
  slaClockState,
  slaWarningAt,
  startSlaClock,
  stopSlaClock,
} from './sla-clock.js';
export {
  PRIORITIES,
  type Priority,
  prioritySchema,
  resolveSlaPolicy,
  type SlaPolicy,
  type SlaPolicyInput,
  type SlaPolicyRule,
  type SlaSubject,
  slaPolicySchema,
} from './sla-policy.js';
export {
  openTicketSla,
  recordAgentReply,
  recordRequesterReply,
  retargetTicketSla,
  type SlaTargets,
  type TicketSla,
  transitionTicketSla,
} from './ticket-sla.js';
export {
  assertTransition,
  canTransition,
  isActiveStatus,
  isReopen,
  nextStatuses,
  TICKET_STATUSES,
  type TicketStatus,
  ticketStatusSchema,
} from './ticket-status.js';
