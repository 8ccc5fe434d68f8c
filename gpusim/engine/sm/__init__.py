"""An SM's timing: timing state, scoreboard and pipes, warp schedulers and issue, stall reasons, and the
timed loop over all SMs."""
