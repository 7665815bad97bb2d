declare module "@novnc/novnc";
