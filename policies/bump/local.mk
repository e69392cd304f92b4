# Policy 'bump': its sources join the core library when configured in.
if HL_POLICY_BUMP
libhlcore_la_SOURCES += policies/bump/bump.h policies/bump/bump.c
endif
